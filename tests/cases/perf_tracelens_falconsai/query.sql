-- Perf models against every row of TraceLens's unified_perf_summary for this trace
-- (tests/tools/make_expected.py, tlsql_perf: the expected differences, each re-derived from the args).
WITH ref(uid, name, gflops, mib, kernel_us_sum, note) AS (VALUES
  (30, 'aten::addmm', 0.930167808, 3.43505859375, 399.13671875, 'same'),
  (104, 'aten::addmm', 3.720671232, 10.27734375, 166.589599609375, 'same'),
  (114, 'aten::addmm', 3.71885568, 10.27294921875, 162.431396484375, 'same'),
  (2, 'aten::convolution', 0.925446144, 3.42333984375, 129.60009765625, 'conv bias counted'),
  (61, 'aten::_scaled_dot_product_flash_attention', 0.476884992, 4.6171875, 122.84814453125, 'same'),
  (17, 'aten::layer_norm', 0.003030528, 2.3173828125, 111.200927734375, 'same'),
  (107, 'aten::gelu', 0.002420736, 9.234375, 60.541259765625, 'tlsql only: unary'),
  (90, 'aten::add', 0.000605184, 3.462890625, 53.535888671875, 'same'),
  (14, 'aten::cat', NULL, NULL, 7.263916015625, 'neither models it'),
  (1256, 'aten::addmm', 0.004721664, 1.13818359375, 6.87890625, 'same'),
  (15, 'aten::add', 0.000605184, 2.59716796875, 3.777099609375, 'same'),
  (1258, 'aten::tanh', 3.072e-06, 0.01171875, 1.5048828125, 'tlsql only: unary')),
mine AS (SELECT r.*, flops(r.uid) / 1e9 AS f, bytes(r.uid) / 1048576.0 AS b FROM ref r),
groups AS (SELECT r.uid, sum(gpu_time(o.uid)) / 1e3 AS us FROM ref r JOIN op e ON e.uid = r.uid
           JOIN op o ON o.name = e.name AND o.input_dims IS e.input_dims AND o.input_types IS e.input_types
            AND o.input_strides IS e.input_strides AND o.concrete_inputs IS e.concrete_inputs GROUP BY r.uid)
SELECT m.uid, m.name, m.note,
       coalesce(abs(m.f - m.gflops) <= 1e-6 * m.gflops + 1e-15, m.f IS m.gflops) AS flops_ok,
       coalesce(abs(m.b - m.mib) <= 1e-6 * m.mib + 1e-15, m.b IS m.mib) AS bytes_ok,
       abs(g.us - m.kernel_us_sum) <= 1e-4 * m.kernel_us_sum AS kernel_time_ok
FROM mine m JOIN groups g ON g.uid = m.uid ORDER BY m.uid;
