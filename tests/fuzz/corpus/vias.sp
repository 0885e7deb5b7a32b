V1 top 0 1.8
R1 top a 1
Vvia a b 0
Rshort b c 0
R2 c 0 1
L1 c d 1n
C1 d 0 1p
R3 d 0 2
