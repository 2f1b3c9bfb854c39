-- The click behind an event's tracking_id (the user agent and landing page that ads destinations ask for).
CREATE INDEX clicks_tracking ON clicks(tracking_id);
