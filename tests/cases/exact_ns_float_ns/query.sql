-- ts/dur/end are exact integer ns from the decimal µs text (Python Decimal x 1000).
SELECT uid, ts, dur, end FROM event WHERE uid IN (0, 5, 1000, 40000, 68000) ORDER BY uid;
