* bom
V1	a	0	1
R1 a b 10kohm
R2 b 0 1MEG
R1 b 0 2
