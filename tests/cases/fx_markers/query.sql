-- tests/data/fx_markers.json: "## fwd ##" [0, 100) encloses "## 3 ##" [10, 50) which encloses aten::mm (kernel 7 µs);
-- aten::add [60, 80) sits directly in "## fwd ##" (kernel 4 µs); aten::relu at 200 is outside any marker.
.report fx
