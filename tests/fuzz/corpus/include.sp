V1 a 0 1
R1 a b 2
.include part.sp
.include "part.sp"
