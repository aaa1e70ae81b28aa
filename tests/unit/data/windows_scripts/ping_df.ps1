$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$global:LASTEXITCODE = $null
& 'ping.exe' '-n' '1' '-w' '2000' '-S' '198.18.0.1' '-f' '-l' '8972' '198.18.0.2'
if ($null -eq $global:LASTEXITCODE) { exit 127 }
exit $global:LASTEXITCODE
