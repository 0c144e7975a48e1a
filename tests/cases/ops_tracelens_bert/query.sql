-- op_summary (what .report ops prints) against TraceLens's ops_summary.csv (see make_expected.py).
WITH ref(name, us, count, pct) AS (VALUES
  ('aten::addmm', 197.59814453125, 26, 63.857156495249946),
  ('aten::_scaled_dot_product_flash_attention', 37.408203125, 4, 12.089088623913868),
  ('aten::native_layer_norm', 30.912109375, 10, 9.989766911224603),
  ('aten::add', 14.752685546875, 9, 4.7675779138858365),
  ('aten::index_select', 9.823974609375, 3, 3.1747822608577647),
  ('aten::gelu', 9.5986328125, 5, 3.1019592775139517),
  ('aten::all', 3.64794921875, 1, 1.178896009884359),
  ('aten::_local_scalar_dense', 2.239990234375, 1, 0.7238904357307586),
  ('aten::eq', 1.760009765625, 1, 0.5687766922270341),
  ('aten::add_', 1.696044921875, 1, 0.5481053795118888))
SELECT ref.name, o.count = ref.count AS count_ok, abs(o.gpu_us - ref.us) <= 1e-4 * ref.us + 1e-3 AS time_ok,
       abs(o.gpu_pct - ref.pct) <= 0.01 AS share_ok
FROM ref LEFT JOIN op_summary o ON o.name = ref.name ORDER BY ref.us DESC;
