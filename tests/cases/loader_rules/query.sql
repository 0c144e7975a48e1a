-- Hand-made trace (tests/data/loader_rules.json, written by a Python snippet in the commit that
-- added it) for SPEC.md's loading rules. Times below in µs as written in the file.
--  0 outer [0,100)            root
--  1 child [10,30)            inside outer
--  2 zero-length at 30        at child's exact end: half-open, so not its child -> outer
--  3 rounded_end [40,100.5)   overruns outer by 0.5 µs < 1 µs: nested (rounded end)
--  4 rounded_start [99.6,109.6) starts 0.9 µs before 3's end and 0.4 µs before outer's:
--                             closes both (rounded start) -> a root, counted once
--  5 partial [200,250), 6 overlapper [220,320): a real partial overlap -> 6 is 5's sibling (root)
--  7 [260,270) inside 6       -> 6
--  8 B at 400 / 9 E at 450    joined: dur 50 µs on the B row; the E row hangs under its B
-- 10 another thread of pid 1 at 410: attached under the main thread's (tid == pid) open annotation 8
-- 11 instant at 50            innermost open event: 3 (rounded_end)
-- 12 ts "500.5" / dur "1" as strings: converted (500500 ns / 1000 ns)
-- 13 the number 5: kept as kind 'other' with its text in args
-- 14 invalid UTF-8 byte -> U+FFFD; 15 raw control character: the JSON is repaired, the name keeps the byte
-- 16 correlation 2^64-1 -> two's complement -1
-- 17 B never closed: dur NULL
SELECT uid, kind, ph, name, ts, dur, parent, depth, correlation FROM event ORDER BY uid;
SELECT "check", count, example_uid FROM health ORDER BY "check";
