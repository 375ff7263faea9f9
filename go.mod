module marsfs

go 1.26.8

require (
	github.com/apache/arrow-go/v18 v18.8.0
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/hashicorp/memberlist v0.7.0
	github.com/hugelgupf/p9 v0.4.1
	github.com/klauspost/compress v1.19.2
	github.com/klauspost/cpuid/v2 v2.4.0
	github.com/pierrec/lz4/v4 v4.1.29
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.71.0
	golang.org/x/sys v0.47.0
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/netlib v0.0.0-20190313105609-8cb42192e0e0
)

require (
	github.com/goccy/go-json v0.10.6 // indirect
	github.com/google/btree v1.1.3 // indirect
	github.com/google/flatbuffers v25.12.19+incompatible // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-metrics v0.7.0 // indirect
	github.com/hashicorp/go-msgpack/v2 v2.1.5 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/hashicorp/go-sockaddr v1.0.7 // indirect
	github.com/hashicorp/golang-lru v1.0.2 // indirect
	github.com/miekg/dns v1.1.73 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/sean-/seed v0.0.0-20170313163322-e2103e2c3529 // indirect
	github.com/u-root/uio v0.0.0-20230305220412-3e8cd9d6bf63 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	golang.org/x/exp v0.0.0-20260112195511-716be5621a96 // indirect
	golang.org/x/net v0.58.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
