module cursus

go 1.22
