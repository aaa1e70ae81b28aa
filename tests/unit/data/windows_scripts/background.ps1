$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Dir = 'C:\Users\bench\AppData\Local\Temp\nicbench-p.frame1514.iperf.r1-0a1b2c3d.d'
$Exe = 'iperf.exe'
$ArgLine = '-s -p 5001 -w 64K'
$PowerShell = 'powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand'
$Runner = '$ProgressPreference = ''SilentlyContinue''
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$Exe = ''iperf.exe''
$ArgLine = ''-s -p 5001 -w 64K''
$ErrorActionPreference = ''Stop''
try {
    $d = (Get-Location).ProviderPath
    $start = @{FilePath = $Exe; WorkingDirectory = $d; NoNewWindow = $true; PassThru = $true
               RedirectStandardOutput = (Join-Path $d ''out''); RedirectStandardError = (Join-Path $d ''err'')}
    if ($ArgLine) { $start.ArgumentList = $ArgLine }
    try {
        $p = Start-Process @start
        $null = $p.Handle
        $p.WaitForExit()
        $rc = [string]$p.ExitCode
    } catch {
        [IO.File]::AppendAllText((Join-Path $d ''err''), ($_ | Out-String))
        $rc = ''127''
    }
    [IO.File]::WriteAllText((Join-Path $d ''rc''), $rc)
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
'
$ErrorActionPreference = 'Stop'
try {
    if (Test-Path -LiteralPath $Dir) { [Console]::Error.WriteLine($Dir + ' exists already'); exit 97 }
    $null = [IO.Directory]::CreateDirectory($Dir)
    if ($NicbenchSession) {
        try { $id = Start-NicbenchBackground $Dir $Exe $ArgLine }
        catch { [Console]::Error.WriteLine('cannot start ' + $Exe + ': ' + $_); exit 97 }
    } else {
        $line = $PowerShell + ' ' + [Convert]::ToBase64String([Text.Encoding]::Unicode.GetBytes($Runner))
        $r = Invoke-CimMethod -ClassName Win32_Process -MethodName Create -Arguments @{CommandLine = $line; CurrentDirectory = $Dir}
        if ($r.ReturnValue -ne 0) {
            [Console]::Error.WriteLine('Win32_Process.Create failed: ' + $r.ReturnValue)
            exit 97
        }
        $id = [int]$r.ProcessId
    }
    $st = ''
    $p = Get-Process -Id $id -ErrorAction SilentlyContinue
    if ($p) { $st = [string]$p.StartTime.ToFileTimeUtc() }
    [IO.File]::WriteAllText((Join-Path $Dir 'pid'), [string]$id + ' ' + $st)
    [Console]::Out.WriteLine([string]$id + ' ' + $Dir)
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
