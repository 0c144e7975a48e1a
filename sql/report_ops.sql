-- per op and category: count, GPU time and share, GFLOPs, TFLOP/s, TB/s, FLOPs/byte, achieved %, bound (TraceLens ops summary); @top rows
SELECT * FROM op_summary ORDER BY gpu_us DESC LIMIT coalesce(@top, 50);
