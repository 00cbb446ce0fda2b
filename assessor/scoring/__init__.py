"""What is counted and how: the lifecycle rule, exact score sums, score tables, and the kept scores every page reads."""
