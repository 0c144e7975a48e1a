-- op_summary (what .report ops prints) against TraceLens's ops_summary.csv (see make_expected.py).
WITH ref(name, us, count, pct) AS (VALUES
  ('aten::addmm', 735.03662109375, 73, 59.98786578240299),
  ('aten::convolution', 129.60009765625, 1, 10.576933230919742),
  ('aten::_scaled_dot_product_flash_attention', 122.84814453125, 12, 10.025892308320707),
  ('aten::native_layer_norm', 111.200927734375, 25, 9.075338746907917),
  ('aten::gelu', 60.541259765625, 12, 4.94089799187665),
  ('aten::add', 57.31298828125, 25, 4.677432048879577),
  ('aten::cat', 7.263916015625, 1, 0.5928232777729626),
  ('aten::tanh', 1.5048828125, 1, 0.12281661291945489))
SELECT ref.name, o.count = ref.count AS count_ok, abs(o.gpu_us - ref.us) <= 1e-4 * ref.us + 1e-3 AS time_ok,
       abs(o.gpu_pct - ref.pct) <= 0.01 AS share_ok
FROM ref LEFT JOIN op_summary o ON o.name = ref.name ORDER BY ref.us DESC;
