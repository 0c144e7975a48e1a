-- Backward ops point at their forward op (fwd); checked against PyTorch's rule in Python.
SELECT uid, name, fwd FROM op WHERE args ->> '$."Fwd thread id"' > 0 ORDER BY uid;
