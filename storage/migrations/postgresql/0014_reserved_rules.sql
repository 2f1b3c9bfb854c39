-- (issue 34: number reserved for the rules' migration; this file gives way to it when the branches meet)
SELECT 1;
