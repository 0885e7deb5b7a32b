R1 a
+ b
+ 5 ; five ohms
R2 b 0 7 $ seven
$ comment
V1 a 0 1.8V
.op
.options foo=1
.end
R3 garbage
