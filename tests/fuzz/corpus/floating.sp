V1 a 0 1
R1 a 0 1
R2 x y 1
R3 y z 1
I1 x z 1m
