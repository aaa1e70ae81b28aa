$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Id = '1234'
$Dir = 'C:\Temp\nicbench.0123456789ab'
$Pattern = '^\[ *[0-9]+\] '
$Count = '1'
$Polls = '40'
$PollMs = '50'
$ErrorActionPreference = 'Stop'
try {
    function Invoke-Native {
        $ErrorActionPreference = 'Continue'
        $exe, $rest = $args
        $null = & $exe @rest 2>&1
        return $LASTEXITCODE
    }

    $out = Join-Path $Dir 'out'
    $rc = Join-Path $Dir 'rc'
    $re = New-Object System.Text.RegularExpressions.Regex($Pattern, 'Multiline')
    function Count-Matches {
        if (-not (Test-Path -LiteralPath $out)) { return 0 }
        $fs = [IO.File]::Open($out, 'Open', 'Read', 'ReadWrite')
        try { $text = (New-Object IO.StreamReader($fs)).ReadToEnd() } finally { $fs.Dispose() }
        return @($text -split "`r?`n" | Where-Object { $re.IsMatch($_) }).Count
    }
    for ($i = 0; (Count-Matches) -lt [int]$Count; $i++) {
        if (Test-Path -LiteralPath $rc) { exit 3 }
        if ($i -ge [int]$Polls) { exit 1 }
        Start-Sleep -Milliseconds ([int]$PollMs)
    }
    $null = Invoke-Native taskkill.exe /PID ([int]$Id) /T /F
    for ($i = 0; $i -lt 100; $i++) {
        if (-not (Get-Process -Id ([int]$Id) -ErrorAction SilentlyContinue)) { exit 0 }
        Start-Sleep -Milliseconds 10
    }
    exit 4
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
