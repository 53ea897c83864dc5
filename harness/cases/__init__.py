"""What to run and what it must give (numpy only): the catalog gathered from
every op, selection by name, and the expected values from the float64
references."""
