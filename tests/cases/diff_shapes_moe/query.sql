-- diff_shapes over the GEMMs, against make_expected.py's own walk of the JSON
.parameter set @name 'aten::%mm'
.parameter set @top 1000
.report diff_shapes
