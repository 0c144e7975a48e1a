-- HTA's call-graph test (test_call_stack.py, backward_thread.json): the backward thread's root is
-- attached under "## backward ##" on the main thread, and the chain runs
-- ProfilerStep#552 > ## backward ## > evaluate_function: AddmmBackward0 > AddmmBackward0 > aten::mm
-- > cudaLaunchKernel > kernel at depths 0..6. The uids are the file positions (0..6).
SELECT uid, kind, name, parent, depth, step FROM event ORDER BY depth;
-- The backward ops carry "Fwd thread id" but their forward op is not in this 7-event excerpt.
SELECT "check", count, example_uid FROM health ORDER BY "check";
