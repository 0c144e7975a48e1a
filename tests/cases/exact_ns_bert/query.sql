-- ts/dur/end are exact integer ns from the decimal µs text (Python Decimal x 1000).
SELECT uid, ts, dur, end FROM event WHERE uid IN (0, 1, 716, 2103, 2135, 2547) ORDER BY uid;
