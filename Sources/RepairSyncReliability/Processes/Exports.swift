// The harness's processes (`DaemonProcess.process`, `APIServerProcess.process`) are `ChildProcess`es: a test that
// imports the harness can signal and wait for them without importing their module itself.
@_exported public import RepairSyncProcesses
