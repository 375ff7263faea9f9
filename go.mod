module marsfs

go 1.26.8

require (
	github.com/hugelgupf/p9 v0.4.1
	golang.org/x/sys v0.47.0
	gonum.org/v1/gonum v0.17.0
)

require github.com/u-root/uio v0.0.0-20230305220412-3e8cd9d6bf63 // indirect
