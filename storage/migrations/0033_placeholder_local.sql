SELECT 1; -- local placeholder, not committed
