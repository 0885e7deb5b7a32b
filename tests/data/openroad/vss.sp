* Netlist for VSS on corner default

* Resistive network
R0 Node_metal4_0_800 Node_metal1_500_800 R=5.000000e-01
R1 Node_metal1_500_800 ITermNode_metal1_500_800 R=5.000000e-01

* Sinks
* Sink for _42_/VSS
I0 ITermNode_metal1_500_800 0 DC -1.000e-01

* Sources
V0 Node_metal4_0_800 0 DC 0.000000

* Footer
.OPTION NUMDGT=6
.OP
.SAVE TYPE=IC FILE=compare.ic
.END

