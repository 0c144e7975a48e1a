-- Perf models against every row of TraceLens's unified_perf_summary for this trace
-- (tests/tools/make_expected.py, tlsql_perf: the expected differences, each re-derived from the args).
WITH ref(uid, name, gflops, mib, kernel_us_sum, note) AS (VALUES
  (48, 'aten::addmm', 0.0739968, 0.7763671875, 98.718017578125, 'same'),
  (477, 'aten::addmm', 4.41119205, 38.211021423339844, 41.280029296875, 'same'),
  (79, 'aten::_scaled_dot_product_flash_attention', 0.040716288, 0.55078125, 37.408203125, 'same'),
  (133, 'aten::addmm', 0.295770624, 2.689453125, 33.089111328125, 'same'),
  (28, 'aten::layer_norm', 0.000364032, 0.28125, 30.912109375, 'same'),
  (123, 'aten::addmm', 0.2959872, 2.6923828125, 24.510986328125, 'same'),
  (19, 'aten::add', 7.2192e-05, 0.4130859375, 14.752685546875, 'same'),
  (126, 'aten::gelu', 0.000288768, 1.1015625, 7.87060546875, 'tlsql only: unary'),
  (37, 'aten::all', 1.41e-07, 0.0001354217529296875, 3.64794921875, 'tlsql only: reduction'),
  (23, 'aten::index_select', 0.0, 0.27646636962890625, 3.424072265625, 'tlsql only: gather'),
  (15, 'aten::index_select', 0.0, 0.27646636962890625, 3.263916015625, 'tlsql only: gather'),
  (8, 'aten::index_select', 0.0, 0.27646636962890625, 3.135986328125, 'tlsql only: gather'),
  (41, 'aten::_local_scalar_dense', NULL, NULL, 2.239990234375, 'neither models it'),
  (36, 'aten::eq', 1.41e-07, 0.0012102127075195312, 1.760009765625, 'tlsql only: comparison, bool output'),
  (463, 'aten::gelu', 7.2192e-05, 0.275390625, 1.72802734375, 'tlsql only: unary'),
  (27, 'aten::add_', 7.2192e-05, 0.4130859375, 1.696044921875, 'same')),
mine AS (SELECT r.*, flops(r.uid) / 1e9 AS f, bytes(r.uid) / 1048576.0 AS b FROM ref r),
groups AS (SELECT r.uid, sum(gpu_time(o.uid)) / 1e3 AS us FROM ref r JOIN op e ON e.uid = r.uid
           JOIN op o ON o.name = e.name AND o.input_dims IS e.input_dims AND o.input_types IS e.input_types
            AND o.input_strides IS e.input_strides AND o.concrete_inputs IS e.concrete_inputs GROUP BY r.uid)
SELECT m.uid, m.name, m.note,
       coalesce(abs(m.f - m.gflops) <= 1e-6 * m.gflops + 1e-15, m.f IS m.gflops) AS flops_ok,
       coalesce(abs(m.b - m.mib) <= 1e-6 * m.mib + 1e-15, m.b IS m.mib) AS bytes_ok,
       abs(g.us - m.kernel_us_sum) <= 1e-4 * m.kernel_us_sum AS kernel_time_ok
FROM mine m JOIN groups g ON g.uid = m.uid ORDER BY m.uid;
