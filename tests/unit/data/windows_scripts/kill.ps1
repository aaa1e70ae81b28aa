$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Id = '1234'
$ErrorActionPreference = 'Stop'
try {
    function Invoke-Native {
        $ErrorActionPreference = 'Continue'
        $exe, $rest = $args
        $null = & $exe @rest 2>&1
        return $LASTEXITCODE
    }

    $rc = Invoke-Native taskkill.exe /PID ([int]$Id) /T /F
    if ($rc -eq 0 -or $rc -eq 128) { exit 0 }
    [Console]::Error.WriteLine('taskkill /PID ' + $Id + ' exited ' + $rc)
    exit $rc
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
