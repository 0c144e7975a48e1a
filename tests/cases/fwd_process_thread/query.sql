-- A backward op's forward op is the one of its Sequence number in its own process, on the thread
-- its "Fwd thread id" names (PyTorch links them by forward thread and seq), else the process's last
-- of that seq (tests/data/fwd_process_thread.json, by hand):
--   MmBackward0 (pid 1, seq 5, Fwd thread id 1): aten::mm uid 0 (pid 1), not uid 1 (pid 2, later);
--   SubBackward0 (pid 1, seq 9, Fwd thread id 7): aten::sub uid 3 (tid 7), not uid 4 (tid 8, later);
--   AddBackward0 (pid 2, seq 11): the only aten::add of seq 11 is in pid 1: none (and health counts it);
--   DivBackward0 (pid 1, seq 13, Fwd thread id 4, a thread with no op of seq 13): the process's
--   last of seq 13, aten::div uid 9 (tid 8).
SELECT b.uid, b.name, b.fwd, f.pid AS fwd_pid, f.tid AS fwd_tid FROM op b LEFT JOIN event f ON f.uid = b.fwd
WHERE b.args ->> '$."Fwd thread id"' > 0 ORDER BY b.uid;
SELECT count FROM health WHERE "check" = 'backward_without_forward';
