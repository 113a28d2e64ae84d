-- The `usage` generation each usage batch was applied at, so a batch sent
-- again (its first answer lost) is told when the store took it, not the
-- generation now: a node that counted it while seeding a Redis counter
-- then knows whether the seed held it. Batches applied before this
-- migration have none (NULL), and are answered with the generation now.
ALTER TABLE usage_batches ADD COLUMN generation BIGINT;
