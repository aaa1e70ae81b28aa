$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Path = 'nicbench-p.frame9014.ntttcp.r1.xml'
$ErrorActionPreference = 'Stop'
try {
    if (Test-Path -LiteralPath $Path) {
        [Console]::Out.WriteLine([Convert]::ToBase64String([IO.File]::ReadAllBytes($Path)))
        Remove-Item -LiteralPath $Path -Force
    }
    exit 0
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
