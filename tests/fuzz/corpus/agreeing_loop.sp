V1 a 0 1
V2 b a 1
V3 b 0 2
R1 b c 1
R2 c 0 1
