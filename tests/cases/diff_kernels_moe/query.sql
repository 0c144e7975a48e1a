-- diff_kernels over the GEMM kernels; peaks: 19.5 TFLOP/s fp32, 1.935 TB/s HBM
.parameter set @name '%gemm%'
.parameter set @top 1000
.report diff_kernels
