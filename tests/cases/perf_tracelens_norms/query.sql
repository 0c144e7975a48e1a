-- Perf models against every row of TraceLens's unified_perf_summary for this trace
-- (tests/tools/make_expected.py, tlsql_perf: the expected differences, each re-derived from the args).
WITH ref(uid, name, gflops, mib, kernel_us_sum, note) AS (VALUES
  (152, 'aten::native_layer_norm_backward', 0.001179648, 1.75, 97.8193359375, 'same'),
  (55, 'aten::native_layer_norm_backward', 0.001179648, 1.5625, 73.626953125, 'same'),
  (800, 'aten::batch_norm', 0.000655456, 1.0003662109375, 65.36572265625, 'same'),
  (123, 'aten::native_group_norm_backward', 0.001179648, 1.500244140625, 58.2705078125, 'weight moved'),
  (919, 'aten::batch_norm', 0.000655456, 1.000244140625, 53.189453125, 'absent weight / bias not moved'),
  (954, 'aten::instance_norm', 0.000656128, 1.001953125, 51.3466796875, 'statistics per sample and channel'),
  (71, 'aten::_fused_rms_norm_backward', 0.00131072, 1.5078125, 49.18505859375, 'same'),
  (820, 'aten::group_norm', 0.000655456, 1.0003662109375, 47.8232421875, 'same'),
  (811, 'aten::layer_norm', 0.000753664, 1.375, 44.34423828125, 'same'),
  (39, 'aten::native_group_norm_backward', 0.001179648, 1.50006103515625, 42.013671875, 'same'),
  (934, 'aten::layer_norm', 0.000753664, 1.25, 38.65576171875, 'absent weight / bias not moved'),
  (60, 'aten::native_batch_norm_backward', 0.001179648, 1.50006103515625, 34.0478515625, 'absent weight not moved'),
  (833, 'aten::instance_norm', 0.000656384, 1.0048828125, 33.72119140625, 'statistics per sample and channel'),
  (943, 'aten::group_norm', 0.000655456, 1.000244140625, 32.884765625, 'absent weight / bias not moved'),
  (988, 'aten::mean', 0.000131072, 0.5000038146972656, 31.32275390625, 'reduced output shape'),
  (103, 'aten::sum', 1.28e-07, 0.00054931640625, 25.99169921875, 'reduced output shape'),
  (286, 'aten::add_', 1.6e-08, 0.00018310546875, 22.6201171875, 'same'),
  (799, 'aten::add_', 1e-09, 2.288818359375e-05, 19.82373046875, 'same'),
  (23, 'aten::native_batch_norm_backward', 0.001179648, 1.50048828125, 19.7470703125, 'absent weight not moved'),
  (13, 'aten::_fused_rms_norm_backward', 0.001048576, 1.5, 17.5830078125, 'no weight: no read, no gradient'),
  (333, 'aten::add_', 1.6384e-05, 0.1875, 16.4599609375, 'same'),
  (167, 'aten::miopen_batch_norm_backward', 0.000524336, 1.00006103515625, 15.2998046875, 'same'),
  (912, 'aten::_fused_rms_norm', 0.000524544, 1.00390625, 13.85888671875, 'same'),
  (88, 'aten::miopen_batch_norm_backward', 0.000524672, 1.00048828125, 13.41796875, 'same'),
  (975, 'aten::_fused_rms_norm', 0.00039347200000000007, 1.0, 13.37744140625, 'no weight: no multiply, no read'),
  (982, 'aten::normal_', NULL, NULL, 13.37646484375, 'neither models it'),
  (9, 'aten::mse_loss_backward', NULL, NULL, 13.33935546875, 'neither models it'),
  (8, 'aten::fill_', 0.0, 0.5, 9.451171875, 'tlsql only: fill writes'),
  (993, 'aten::fill_', 0.0, 3.814697265625e-06, 8.1689453125, 'tlsql only: fill writes'),
  (258, 'aten::add_', 1.024e-06, 0.01171875, 4.52490234375, 'same')),
mine AS (SELECT r.*, flops(r.uid) / 1e9 AS f, bytes(r.uid) / 1048576.0 AS b FROM ref r),
groups AS (SELECT r.uid, sum(gpu_time(o.uid) - coalesce((SELECT sum(g.dur) FROM descendants(o.uid) d JOIN event g ON g.uid = d.uid AND g.kind = 'memset'), 0)) / 1e3 AS us FROM ref r JOIN op e ON e.uid = r.uid
           JOIN op o ON o.name = e.name AND o.input_dims IS e.input_dims AND o.input_types IS e.input_types
            AND o.input_strides IS e.input_strides AND o.concrete_inputs IS e.concrete_inputs GROUP BY r.uid)
SELECT m.uid, m.name, m.note,
       coalesce(abs(m.f - m.gflops) <= 1e-6 * m.gflops + 1e-15, m.f IS m.gflops) AS flops_ok,
       coalesce(abs(m.b - m.mib) <= 1e-6 * m.mib + 1e-15, m.b IS m.mib) AS bytes_ok,
       abs(g.us - m.kernel_us_sum) <= 1e-4 * m.kernel_us_sum AS kernel_time_ok
FROM mine m JOIN groups g ON g.uid = m.uid ORDER BY m.uid;
