* Netlist for VDD on corner default

* Resistive network
R0 Node_metal4_0_0 Node_metal1_500_0 R=2.000000e+00
R1 Node_metal4_1000_0 Node_metal1_500_0 R=2.000000e+00
R2 Node_metal1_500_0 Node_metal1_500_400 R=1.000000e+00
R3 Node_metal1_500_0 Node_metal1_500_400 r=1.000000e+00
R4 Node_metal1_500_400 ITermNode_metal1_500_400 R=1.000000e-03

* Sinks
* Sink for _42_/VDD
I0 ITermNode_metal1_500_400 0 DC 1.000e-01

* Sources
V0 Node_metal4_0_0 0 DC 1.100000
V1 Node_metal4_1000_0 0 DC 1.100000

* Footer
.OPTION NUMDGT=6
.OP
.SAVE TYPE=IC FILE=compare.ic
.END

