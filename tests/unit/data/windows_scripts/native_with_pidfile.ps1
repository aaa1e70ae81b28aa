$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
[Console]::Out.WriteLine($PID)
$PidFile = 'C:\Users\bench\AppData\Local\Temp\nicbench-p.frame1514.iperf.r1-0a1b2c3d.pid'
try { [IO.File]::WriteAllText($PidFile, [string]$PID + ' ' + [string](Get-Process -Id $PID).StartTime.ToFileTimeUtc()) }
catch { [Console]::Error.WriteLine('cannot write ' + $PidFile + ': ' + $_); exit 97 }
$global:LASTEXITCODE = $null
& 'iperf.exe' '-c' '198.18.0.1' '-t' '10'
Remove-Item -LiteralPath $PidFile -Force -ErrorAction SilentlyContinue
if ($null -eq $global:LASTEXITCODE) { exit 127 }
exit $global:LASTEXITCODE
