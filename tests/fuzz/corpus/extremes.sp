R1 a b 1
C1 a 0 1p
I1 a 0 1m
R2 b 0 1e-30
R3 a 0 1e30
