module marsfs

go 1.26.8
