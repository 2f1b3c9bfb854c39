-- 0024 = SQLite's 0039 (issue 34): the clicks' weekly rows of the coarse level (conversion_level_clicks, period
-- 'w') are no longer added to by every pass. A pass adds each click to its day's rows; once a day is over (a
-- newer click has been counted) its daily rows are added to their weeks in one statement, and this mark moves
-- past it (storage.conversions.fold_click_weeks). The weekly rows hold exactly the clicks of the days before
-- `day`; a report reads the days from it by day. No row until the first pass of this release, which puts the
-- mark after the last day counted so far (the weekly rows of those days are whole).
CREATE TABLE conversion_click_weeks (
    name text COLLATE "C" PRIMARY KEY,
    day  text COLLATE "C" NOT NULL
);
