$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$ErrorActionPreference = 'Stop'
try {
    $c = @(Get-CimInstance -ClassName Win32_PerfRawData_PerfOS_Processor | Where-Object { $_.Name -ne '_Total' } | ForEach-Object {
        [ordered]@{name = [string]$_.Name; idle = [string]$_.PercentProcessorTime; ts = [string]$_.Timestamp_Sys100NS}
    })
    [Console]::Out.WriteLine((ConvertTo-Json -Compress -InputObject $c))
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
