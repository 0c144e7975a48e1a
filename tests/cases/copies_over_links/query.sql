-- tests/data/copies_over_links.json: three aten::copy_ of float[1000]. The one whose GPU work is a
-- Memcpy DtoH and the one (under aten::_to_copy) whose work is a Memcpy HtoD move their bytes over
-- the host link, not HBM: no model (NULL FLOPs and bytes), so no roofline point and no achieved %
-- against HBM; their GPU time still counts (counted_op: launchers). The DtoD copy keeps the
-- elementwise model: 1000 FLOPs, 1000 · 4 read + 1000 · 4 written = 8000 bytes. _to_copy has only
-- the host copy below it either: no model, and it is not counted (the copy_ below launched it).
SELECT uid, name, flops(uid), bytes(uid), gpu_time(uid), counted(uid) FROM op ORDER BY uid;
