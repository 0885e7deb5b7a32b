* Both nets of one design as OpenROAD's PDNSim writes them (write_pg_spice, one file per net),
* solved together. Each file numbers its elements from R0, I0 and V0, so names repeat across the
* two files: a warning, and every element is kept.
.include "vdd.sp"
.include "vss.sp"
.end
