$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Paths = 'C:\Users\bench\AppData\Local\Temp\nicbench-p.frame1514.iperf.r1-0a1b2c3d.d
C:\Users\bench\AppData\Local\Temp\nicbench-p.frame1514.iperf.r1-0a1b2c3d.pid'
$ErrorActionPreference = 'Stop'
try {
    function Invoke-Native {
        $ErrorActionPreference = 'Continue'
        $exe, $rest = $args
        $null = & $exe @rest 2>&1
        return $LASTEXITCODE
    }

    foreach ($p in ($Paths -split "`n")) {
        if ($p -eq '') { continue }
        try {
            if (-not (Test-Path -LiteralPath $p)) { [Console]::Out.WriteLine('none ' + $p); continue }
            $f = $null
            if (Test-Path -LiteralPath $p -PathType Container) { $f = Join-Path $p 'pid' }
            elseif ($p.EndsWith('.pid')) { $f = $p }
            $what = 'gone'
            if ($f -and (Test-Path -LiteralPath $f -PathType Leaf)) {
                $words = @([IO.File]::ReadAllText($f).Trim() -split '\s+')
                $id = 0
                if ($words.Count -eq 2 -and [int]::TryParse($words[0], [ref]$id)) {
                    $proc = Get-Process -Id $id -ErrorAction SilentlyContinue
                    if ($proc -and [string]$proc.StartTime.ToFileTimeUtc() -eq $words[1]) {
                        $null = Invoke-Native taskkill.exe /PID $id /T /F
                        $null = $proc.WaitForExit(5000)
                        $what = 'stopped'
                    }
                }
            }
            for ($i = 0; ($i -lt 50) -and (Test-Path -LiteralPath $p); $i++) {
                Remove-Item -LiteralPath $p -Recurse -Force -ErrorAction SilentlyContinue
                if (Test-Path -LiteralPath $p) { Start-Sleep -Milliseconds 100 }
            }
            if (Test-Path -LiteralPath $p) { [Console]::Error.WriteLine('cannot remove ' + $p); continue }
            [Console]::Out.WriteLine($what + ' ' + $p)
        } catch {
            [Console]::Error.WriteLine($p + ': ' + ($_ | Out-String).Trim())
        }
    }
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
