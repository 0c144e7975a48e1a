-- two copies of the control trace: summed (HTA) then averaged over ranks
.parameter set @sort 'name'
.parameter set @top 'all'
.parameter set @normalize 0
.parameter set @totals 0
.parameter set @control_step 1010
.parameter set @test_step 1010
.parameter set @control_rank 'all'
.report diff
.parameter set @agg 'avg'
.report diff
