-- tests/data/counted_nested_launchers.json: vllm::moe_forward [0, 100) launches moe_k (40 µs) and
-- holds SortTokens [20, 50), which launches sort_k (10 µs); aten::relu launches relu_k (5 µs).
-- counted_op holds the outermost launching ops only, so the ops report counts each GPU µs once:
-- moe_forward 40 + 10 = 50 µs, relu 5 µs, total 55 µs = all GPU time; SortTokens is not counted.
SELECT name, gpu_ns FROM counted_op ORDER BY name;
SELECT sum(gpu_us) AS ops_us, (SELECT sum(dur) / 1e3 FROM kernel) AS kernel_us FROM op_summary;
