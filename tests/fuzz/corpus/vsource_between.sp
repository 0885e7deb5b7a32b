I1 0 a 1
V2 b a 0.5
R1 a 0 2
R2 b 0 2
