# Exit 0 if the group is alive, 1 if not.
alive
