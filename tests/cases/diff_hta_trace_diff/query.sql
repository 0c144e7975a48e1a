-- HTA TraceDiff.compare_traces + ops_diff, iteration 1010 vs 1010 (../shared/expected/hta)
.parameter set @sort 'name'
.parameter set @top 'all'
.parameter set @normalize 0
.parameter set @totals 0
.parameter set @control_step 1010
.parameter set @test_step 1010
.parameter set @device 'ALL'
.parameter set @short 0
.report diff
.parameter set @device 'ALL'
.parameter set @short 1
.report diff
.parameter set @device 'CPU'
.parameter set @short 0
.report diff
.parameter set @device 'CPU'
.parameter set @short 1
.report diff
.parameter set @device 'GPU'
.parameter set @short 0
.report diff
.parameter set @device 'GPU'
.parameter set @short 1
.report diff
