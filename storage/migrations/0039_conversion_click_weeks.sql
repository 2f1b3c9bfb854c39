-- Issue 34: the clicks' weekly rows of the coarse level (conversion_level_clicks, period 'w') are no longer
-- added to by every pass. A pass adds each click to its day's rows; once a day is over (a newer click has been
-- counted) its daily rows are added to their weeks in one statement, and this mark moves past it
-- (storage.conversions.fold_click_weeks). The weekly rows hold exactly the clicks of the days before `day`;
-- a report reads the days from it by day. No row until the first pass of this release, which puts the mark
-- after the last day counted so far (the weekly rows of those days are whole: the passes before added to both).
-- Its own table: the deleting triggers of 0028 move every row of conversion_click_mark.
CREATE TABLE conversion_click_weeks (
    name TEXT PRIMARY KEY,
    day  TEXT NOT NULL
);
