Vdd src 0 DC 1 AC 1
R1 src vdd 10
R2 gnd1 0 10
I1 vdd gnd1 2m
