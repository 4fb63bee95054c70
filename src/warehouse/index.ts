export { COLUMN_TYPES, timestampMicros } from './column-spec.js';
export type { ColumnSpec, ColumnType, TimestampUnit } from './column-spec.js';
export { SnapshotSchemaError, SnapshotValueError, SnapshotWriteError } from './errors.js';
export {
  DEFAULT_COMPRESSION,
  DEFAULT_MAX_ROW_GROUP_BYTES,
  DEFAULT_ROW_GROUP_SIZE,
  PARQUET_COMPRESSIONS,
  writeParquetFile,
} from './parquet-writer.js';
export type {
  ParquetCompression,
  Row,
  RowSource,
  WriteParquetFileOptions,
  WriteParquetFileResult,
} from './parquet-writer.js';
// Barrel: this re-export list repeats the names snapshot.ts imports from snapshot-layout.ts.
export {
  MANIFESTS_DIR_NAME,
  PART_FILE_NAME,
  isSnapshotDate,
  listManifestDates,
  listSnapshotDates,
  manifestPath,
  partitionDir,
  snapshotFilePath,
  utcDate,
} from './snapshot-layout.js';
export { readSnapshotManifest } from './manifest.js';
export type { ManifestColumn, ManifestTable, SnapshotManifest } from './manifest.js';
export { writeSnapshot } from './snapshot.js';
export type {
  RemovedPartition,
  SnapshotResult,
  SnapshotTableInput,
  SnapshotTableResult,
  WriteSnapshotOptions,
} from './snapshot.js';
