package chunk

import (
	"encoding/gob"
)

// The kernel argument types travel to worker processes inside Op.Args,
// an interface, which encoding/gob can decode only for types registered
// with it beforehand, in every process: so they are registered here, at
// initialization, all in one list.
func init() {
	for _, args := range []any{
		ConstArgs{}, GenArgs{}, AssembleArgs{}, SplitArgs{}, ElemArgs{}, ReduceArgs{}, ScanArgs{},
		TransposeArgs{}, ReshapeArgs{}, MatmulArgs{}, NPYArgs{}, ZarrArgs{}, NPYWriteArgs{}, ZarrWriteArgs{}, FuseArgs{}, ExprArgs{}, PartArgs{}, MapsArgs{}, LabelSumsArgs{}, GroupByArgs{},
		QRFactorArgs{}, QRQArgs{}, QRQTArgs{}, SVDPartArgs{}, SortArgs{},
		HistArgs{}, BincountArgs{}, PercentileArgs{}, UniqueArgs{}, BincountLenArgs{},
		DiagonalArgs{}, MaskArgs{}, EighArgs{}, TakeArgs{}, TakePieceArgs{}, SampleSortArgs{}, NonEmptyArgs{}, LookupArgs{},
	} {
		gob.Register(args)
	}
}
