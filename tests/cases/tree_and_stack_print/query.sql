.tree 0
.tree 0 2
.stack 5
